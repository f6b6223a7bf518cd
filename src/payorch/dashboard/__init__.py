"""The dashboard: server-rendered pages at /dashboard for the people who run payments.

Pages call the domains' services in-process, as the API endpoints do; see docs/dashboard.md.
"""
