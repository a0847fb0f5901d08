# shellcheck shell=sh
# t/vm/vm-lib.sh - helpers shared by the host-side scripts of the qemu test
# bed (sourced, POSIX sh).  Nothing here runs inside the guest.

# vm_find_kernel: set VM_KERNEL (path of a bzImage) and VM_KVER (its module
# directory name under /lib/modules).  PIN_VM_KERNEL picks one explicitly;
# otherwise the newest /boot/vmlinuz-* that has /lib/modules/<ver>/kernel.
# Returns 1 with a one-line reason in VM_ERROR when there is none.
# shellcheck disable=SC2034  # VM_ERROR is for the caller
vm_find_kernel ()
{
    VM_KERNEL=""
    VM_KVER=""
    VM_ERROR=""
    if test -n "${PIN_VM_KERNEL:-}"; then
        if ! test -r "$PIN_VM_KERNEL"; then
            VM_ERROR="PIN_VM_KERNEL=$PIN_VM_KERNEL: not a readable file; unset it or name a /boot/vmlinuz-* file"
            return 1
        fi
        VM_KERNEL=$PIN_VM_KERNEL
        VM_KVER=${PIN_VM_KVER:-$(basename "$PIN_VM_KERNEL" | sed 's/^vmlinuz-//')}
    else
        # newest version last (sort -V is in coreutils)
        VM_KERNEL=$(for k in /boot/vmlinuz-*; do
                         v=${k#/boot/vmlinuz-}
                         test -r "$k" && test -d "/lib/modules/$v/kernel" \
                             && echo "$k"
                     done | sort -V | tail -n 1)
        VM_KVER=${VM_KERNEL#/boot/vmlinuz-}
        if test -z "$VM_KERNEL"; then
            VM_ERROR="no readable /boot/vmlinuz-<ver> with /lib/modules/<ver>/kernel: install linux-image-amd64 (contrib/install-deps.sh) or set PIN_VM_KERNEL"
            return 1
        fi
    fi
    if ! test -d "/lib/modules/$VM_KVER/kernel"; then
        VM_ERROR="kernel $VM_KERNEL: /lib/modules/$VM_KVER/kernel not found; set PIN_VM_KVER to its module directory name"
        return 1
    fi
    return 0
}
