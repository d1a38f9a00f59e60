import { Injectable } from '@nestjs/common';

export interface SavedCard {
  paymentMethodId: string;
  lastFour: string;
  expires: string;
}

/** The sample's business state: the cards each shopper has saved, kept in step by the notifications. */
@Injectable()
export class SavedCardsStore {
  private readonly cardsByShopper = new Map<string, SavedCard[]>();

  save(shopperId: string, card: SavedCard): void {
    const others = this.cardsOf(shopperId).filter((saved) => saved.paymentMethodId !== card.paymentMethodId);
    this.cardsByShopper.set(shopperId, [...others, card]);
  }

  remove(shopperId: string, paymentMethodId: string): void {
    this.cardsByShopper.set(
      shopperId,
      this.cardsOf(shopperId).filter((saved) => saved.paymentMethodId !== paymentMethodId),
    );
  }

  cardsOf(shopperId: string): SavedCard[] {
    return this.cardsByShopper.get(shopperId) ?? [];
  }
}
