"""Clients for external services: the only code in `papers` that touches the network."""
