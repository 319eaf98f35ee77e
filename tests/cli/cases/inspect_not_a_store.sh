mkdir d
memhist inspect d
