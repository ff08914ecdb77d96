"""arcana-jupyter: an explainable LLM agent runtime for Jupyter."""

__version__ = "0.1.0"
