"""trimcp: a Trio-native Model Context Protocol library."""
