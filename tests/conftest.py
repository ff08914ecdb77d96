"""Fixtures shared by every test folder."""

from __future__ import annotations

from scripted_chat import make_runtime

__all__ = ["make_runtime"]
