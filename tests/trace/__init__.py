"""Tests of obs trace."""
