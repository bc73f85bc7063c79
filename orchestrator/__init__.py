"""sslbench: benchmark the crypto speed of a fleet of small Linux boxes over SSH with Ansible."""

__version__ = "0.1.0"
