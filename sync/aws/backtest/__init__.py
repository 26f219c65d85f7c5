"""Metric history for `obs backtest`, read from CloudWatch."""
