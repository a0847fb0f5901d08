job=1 step=1 rank=0 gpus=1 cuda=1 cpus=0
