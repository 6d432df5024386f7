"""Sub-commands of the jurybox CLI, one module per feature."""
