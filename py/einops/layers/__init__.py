"""einops' layers: `einops.layers.torch` holds the ones for the torch stand-in."""
