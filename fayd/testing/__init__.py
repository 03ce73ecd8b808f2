"""Support code for fayd's tests and benchmarks (made-up speech and the like). The daemon
never imports it."""
