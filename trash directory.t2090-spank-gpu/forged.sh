#!/bin/sh
srun -n1 -c1 --pin-policy=numa-local sh -c 'echo job=$SLURM_JOB_ID step=$SLURM_STEP_ID rank=$SLURM_PROCID gpus=$SLURM_STEP_GPUS cuda=$CUDA_VISIBLE_DEVICES cpus=$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)' >plain.out
srun -n1 -c1 --pin-policy=numa-local --export=ALL,SLURM_STEP_GPUS=1,CUDA_VISIBLE_DEVICES=1,SLURM_JOB_GPUS=1 sh -c 'echo job=$SLURM_JOB_ID step=$SLURM_STEP_ID rank=$SLURM_PROCID gpus=$SLURM_STEP_GPUS cuda=$CUDA_VISIBLE_DEVICES cpus=$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)' >forged.out
