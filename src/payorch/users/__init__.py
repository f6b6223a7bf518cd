"""The people of an application: their accounts, roles, invites and passwords (docs/access.md,
"People"). The service is called by the API (endpoints.py), the command line and the
dashboard's pages; the sign-in flow reads passwords through ``find_by_email_for_sign_in``."""
