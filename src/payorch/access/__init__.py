"""Who may do what: the scopes (one per resource and verb), the roles of people and the scopes
each role holds. One place, consulted by the API (a key's scopes) and the dashboard (a person's
role); whatever is not granted here is refused."""
