import * as Select from '@radix-ui/react-select';
import { Check, ChevronDown } from 'lucide-react';
import { pickerCurrencies, symbolFor } from '@/lib/currency/currencies';

/** The currency picker of the top bar: the 15 picker currencies, and the chosen one when it is another. */
export function CurrencyPicker({ value, onChange }: { value: string; onChange: (code: string) => void }) {
  return (
    <Select.Root value={value} onValueChange={onChange}>
      <Select.Trigger
        aria-label="Currency"
        className="inline-flex h-9 items-center gap-1.5 rounded-lg border border-zinc-800 bg-zinc-900 px-2.5 text-sm font-medium text-zinc-200 transition hover:border-zinc-700 hover:bg-zinc-800 focus-visible:outline-2 focus-visible:outline-brand-400"
      >
        <span className="text-zinc-400" aria-hidden>
          {symbolFor(value)}
        </span>
        <Select.Value>{value}</Select.Value>
        <Select.Icon>
          <ChevronDown className="size-3.5 text-zinc-400" aria-hidden />
        </Select.Icon>
      </Select.Trigger>
      <Select.Portal>
        <Select.Content
          position="popper"
          sideOffset={6}
          className="z-50 max-h-80 min-w-52 overflow-hidden rounded-xl border border-zinc-800 bg-zinc-900 shadow-2xl shadow-black/60"
        >
          <Select.Viewport className="p-1">
            {pickerCurrencies(value).map((c) => (
              <Select.Item
                key={c.code}
                value={c.code}
                className="relative flex cursor-pointer items-center gap-3 rounded-lg py-2 pr-8 pl-3 text-sm text-zinc-200 outline-none select-none data-[highlighted]:bg-zinc-800 data-[highlighted]:text-white"
              >
                <span className="w-8 text-zinc-400">{c.symbol}</span>
                <Select.ItemText>{c.code}</Select.ItemText>
                <span className="truncate text-zinc-400">{c.name}</span>
                <Select.ItemIndicator className="absolute right-2">
                  <Check className="size-4 text-brand-400" aria-hidden />
                </Select.ItemIndicator>
              </Select.Item>
            ))}
          </Select.Viewport>
        </Select.Content>
      </Select.Portal>
    </Select.Root>
  );
}
