"""Simulator controls (sandbox only): fault modes and settling payments left in process."""
