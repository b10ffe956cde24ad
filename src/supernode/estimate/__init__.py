"""Analytic step-time model: compute, exposed communication, bubble, optimizer, MFU."""
