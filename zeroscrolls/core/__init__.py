"""The values and failures every layer shares; imports nothing else of the package."""
