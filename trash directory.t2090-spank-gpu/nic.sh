#!/bin/sh
srun -n1 -c1 --pin-policy=numa-local,nic,verbose sh -c 'echo job=$SLURM_JOB_ID step=$SLURM_STEP_ID rank=$SLURM_PROCID gpus=$SLURM_STEP_GPUS cuda=$CUDA_VISIBLE_DEVICES cpus=$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)' >nic.out 2>nic.err
