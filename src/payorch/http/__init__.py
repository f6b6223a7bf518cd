"""The HTTP edge shared by every domain: request context, error rendering, JSON responses."""
