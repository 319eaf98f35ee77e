cp -r "$DATA/small-v1.store" v1
memhist upgrade v1 v2
