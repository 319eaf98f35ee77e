# lackey transitions restart at 0: appending them after transition 12 is
# refused by the writer (transitions never decrease), nothing is added.
small_store s
memhist import --append --format lackey "$DATA/small.lackey" s
