// TrailClient
