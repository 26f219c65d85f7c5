"""Pure: an offline model of how Datadog evaluates the monitors obs emits, minute by minute.

Every rule follows the published evaluation behaviour; where that behaviour is undocumented the model takes
the conservative reading (later alerts, later recoveries, fewer points) and names it as an assumption
(`notes.py`), so a scenario that passes here does not pass by luck of an optimistic guess.
"""
