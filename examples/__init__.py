"""Example applications that jurybox suites test (importable as ``examples.<name>``)."""
