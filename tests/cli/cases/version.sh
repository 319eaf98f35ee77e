memhist --version
