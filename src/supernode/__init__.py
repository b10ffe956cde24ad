"""supernode: design, simulate and operate AI supernode clusters."""

__version__ = "0.1.0"
