"""Devices: the registry, their microphones and speakers, and what they are sent."""
