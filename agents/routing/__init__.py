"""Routing: the specialists (plain callables registered by name) and the gateway that calls them."""
