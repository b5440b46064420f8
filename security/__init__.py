"""Secrets of the cluster, made at set-up: the control plane's TLS certificates (`tls`, laid
out and loaded by `tls_files`). Imports nothing from the controller or the broker.
"""
