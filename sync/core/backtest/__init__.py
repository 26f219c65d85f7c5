"""Pure: the monitors of an environment replayed over real metric history, with the model `obs test` uses."""
