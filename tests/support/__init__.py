"""Harness for the integration and docker tiers: real processes, waited on with deadlines."""
