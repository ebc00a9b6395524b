"""What leaves the product: grades, reports and the grades written back into evaluation logs."""
