"""The doors on the API's port besides the control API, each behind its lock (fayd.auth)."""
