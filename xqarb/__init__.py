"""xqarb: Xiangqi venue arbitration service."""

__version__ = "0.1.0"
