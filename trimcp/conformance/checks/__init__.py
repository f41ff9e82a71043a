"""The checks of trimcp check, one module per area."""
