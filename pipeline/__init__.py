"""PySpark jobs that turn many run directories into verdicts, latency figures and plots.
Not implemented yet."""
