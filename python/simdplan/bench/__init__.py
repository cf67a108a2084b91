"""simdplan.bench: benchmark harnesses behind ``simdplan bench`` (robots of different shape, side by side)."""
