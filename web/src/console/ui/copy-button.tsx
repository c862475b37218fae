import { Check, Copy } from 'lucide-react';
import { useState } from 'react';
import { IconButton } from '@/components/ui/button';

/** Copies text to the clipboard and shows a tick for a moment. */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [done, setDone] = useState(false);
  return (
    <IconButton
      label={label}
      onClick={() => {
        void navigator.clipboard?.writeText(text).then(() => {
          setDone(true);
          setTimeout(() => setDone(false), 1500);
        });
      }}
    >
      {done ? <Check className="size-4 text-emerald-400" /> : <Copy className="size-4" />}
    </IconButton>
  );
}
