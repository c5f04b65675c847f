"""Serving a built site to programs: it reads only what the build wrote (the JSON twins), never the build itself."""
