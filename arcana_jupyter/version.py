"""The package's version, in the ground layer: modules import it from here, never from the package root."""

__version__ = "0.1.0"
