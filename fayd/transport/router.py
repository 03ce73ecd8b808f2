"""Sends each device's frames over the transport the device is on: its serial link when a
serial port carries it, the MQTT link otherwise."""

from __future__ import annotations

from typing import Protocol

from fayd.protocol import Outgoing, Sender


class Ports(Sender, Protocol):
    def owns(self, device: str) -> bool: ...


class Router:
    def __init__(self, mqtt: Sender, serial: Ports | None = None) -> None:
        self.mqtt = mqtt
        self.serial = serial

    def send(self, device: str, frame: Outgoing) -> bool:
        # owns(), not send()'s result: False from send() also means "dropped, queue full".
        if self.serial is not None and self.serial.owns(device):
            return self.serial.send(device, frame)
        return self.mqtt.send(device, frame)
