"""One file per class of reward hack an adversarial review found; each tries several instances."""
