#!/bin/sh
srun -n1 -c1 --gres=gpu:1 --pin-policy=numa-local,verbose sh -c 'echo job=$SLURM_JOB_ID step=$SLURM_STEP_ID rank=$SLURM_PROCID gpus=$SLURM_STEP_GPUS cuda=$CUDA_VISIBLE_DEVICES cpus=$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status); sleep 4' >hostile.a 2>hostile.a.err &
sleep 1
srun -n1 -c1 --gres=gpu:1 --pin-policy=numa-local,verbose sh -c 'echo job=$SLURM_JOB_ID step=$SLURM_STEP_ID rank=$SLURM_PROCID gpus=$SLURM_STEP_GPUS cuda=$CUDA_VISIBLE_DEVICES cpus=$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)' >hostile.b 2>hostile.b.err
wait
