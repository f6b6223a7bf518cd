"""Simulator domain."""
