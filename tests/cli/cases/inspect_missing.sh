memhist inspect nowhere
