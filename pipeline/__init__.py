"""The PySpark side: executor- and driver-side client helpers and jobs (clients of the gRPC API)."""
