"""Thin client for the dataset registry. Imports no Django."""

__version__ = "0.1.0"
