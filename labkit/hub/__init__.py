"""The class hub: JupyterHub on the school's GPU server, one isolated lab per student."""
