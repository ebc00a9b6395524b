"""The statistics: strata, allocation, the queue, estimators, intervals, savings, the forecast, stopping, simulation."""
