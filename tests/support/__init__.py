"""Test and benchmark harness code that the library does not ship."""
