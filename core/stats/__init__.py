"""The statistics: strata, allocation, the queue, estimators, intervals, savings, planning, simulation."""
